"""`python -m local` is `python -m local.run`."""

import sys

from local.run import main

if __name__ == "__main__":  # spawned sandboxes import this module too; only the runner itself runs main()
    sys.exit(main())
