"""``python -m agenteval_otel.cli`` is ``agenteval``."""

import sys

from agenteval_otel.cli._main import main

if __name__ == "__main__":
    sys.exit(main())
