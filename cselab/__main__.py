import sys

from .cli import main

if __name__ == "__main__":   # `python -m cselab`; importing the module (a reload, a docs build) runs nothing
    sys.exit(main())
