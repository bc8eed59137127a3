"""``python -m raterstats.cli``: the ``raterstats`` console script."""

from raterstats.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
