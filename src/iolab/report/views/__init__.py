"""Views: what each table and chart of a report shows, built from a Dataset."""
