"""`python -m factseek.cli`: the factseek command line."""

from factseek.cli import main

main()
