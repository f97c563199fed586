"""``python -m termgrade``: the same CLI as the ``termgrade`` command."""

from termgrade.cli import main

main()
