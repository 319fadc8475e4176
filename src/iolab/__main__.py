from iolab.cli import main

main()
