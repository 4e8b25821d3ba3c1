"""``python -m simhash_cli``: the same as the ``simhash`` command."""

from .cli import main

main(prog_name="simhash")
