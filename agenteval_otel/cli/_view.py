"""``agenteval view``: the local viewer over the run history and report files, on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
import webbrowser
from typing import Any

from agenteval_otel.cli._args import port
from agenteval_otel.cli._exits import EXIT_OK

__all__ = ["add_commands"]


def view(args: argparse.Namespace) -> int:
    """Serve the viewer until Ctrl-C; a missing or unreadable history is an error (exit 2) before it starts."""
    from agenteval_otel.reports import LOOPBACK, Viewer, viewer_server
    from agenteval_otel.results import DEFAULT_HISTORY, HistoryStore

    store = HistoryStore(args.history or DEFAULT_HISTORY, keep=1)
    store.runs(1)  # a missing or damaged store: HistoryError, said in one line
    server = viewer_server(Viewer(store, args.reports or (), trace_url=args.trace_url), args.port)
    url = f"http://{LOOPBACK}:{server.server_address[1]}/"
    print(f"agenteval view: {store.path} at {url} (Ctrl-C stops)", flush=True)
    if args.open:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("agenteval view: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return EXIT_OK


def add_commands(commands: Any) -> None:
    """``view``."""
    parser = commands.add_parser("view", help="serve pages over the run history and reports on 127.0.0.1")
    parser.add_argument("--port", type=port, default=0, metavar="N", help="the port (default: a free one, printed)")
    parser.add_argument("--history", metavar="PATH", help="the run history, a SQLite file (.agenteval/history.db)")
    parser.add_argument("--reports", nargs="+", metavar="DIR_OR_FILE",
                        help="JSON reports (files, or folders of them): a run whose report is among them shows "
                             "its failures with their evidence and trajectory")
    parser.add_argument("--trace-url", metavar="TEMPLATE",
                        help="link each failure to its trace: a URL with {trace_id} and optionally {span_id}, "
                             "e.g. http://localhost:16686/trace/{trace_id} (Jaeger)")
    parser.add_argument("--open", action="store_true", help="open the page in the web browser")
    parser.set_defaults(handler=view)
