"""``python -m hloidx.model_explorer FILE [NODE_DATA.json ...] [--port N]``: Model Explorer's
server with hloidx's extension, offline (no version check against the package index)."""

from __future__ import annotations

import argparse

from .serve import serve


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m hloidx.model_explorer", description=__doc__)
    parser.add_argument("files", nargs="+", help="HLO / StableHLO files, then node-data JSON")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--open", action="store_true", help="open the page in a browser")
    args = parser.parse_args()
    models = [f for f in args.files if not f.endswith(".json")]
    node_data = [f for f in args.files if f.endswith(".json")]
    serve(models, node_data, host=args.host, port=args.port, open_browser=args.open)


if __name__ == "__main__":
    main()
