"""`python -m factseek`: the factseek command line."""

from factseek.cli import main

main()
