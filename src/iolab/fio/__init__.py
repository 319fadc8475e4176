"""Everything that speaks fio: job files, running it, reading what it prints."""
