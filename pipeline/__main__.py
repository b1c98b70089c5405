"""`python -m pipeline ...`: the same command line as the `topicmap` console script."""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main())
