"""``python -m hloidx``: the same command line as the ``hloidx`` script."""

from .cli import main

if __name__ == "__main__":
    main()
