"""`python -m pipeline ...`: the same command line as the `topicmap` console script."""

import gc
import sys

from pipeline.cli import main

if __name__ == "__main__":
    code = main()
    # The process ends here: its objects moved out of the collector's reach, so that exiting
    # does not walk them all (a second after the embed stage has imported torch)
    gc.freeze()
    sys.exit(code)
