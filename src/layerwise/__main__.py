"""Command line: ``python -m layerwise {book,moments,store,data} ...``."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "book": ("layerwise.book", "execute chapters with papermill and build the HTML book"),
    "moments": (
        "layerwise.moments_cli",
        "propagate signal and noise through random networks (Ch. 3-5)",
    ),
    "store": ("layerwise.store_cli", "list, verify or import results-store entries"),
    "data": ("layerwise.fetch", "download or verify the papers' data sets (CIFAR-10, MNIST)"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = [f"  {k:<8} {v[1]}" for k, v in COMMANDS.items()]
        msg = "usage: python -m layerwise COMMAND [ARGS]\n\ncommands:\n" + "\n".join(lines)
        if argv and argv[0] not in ("-h", "--help"):
            print(
                f"error: command={argv[0]!r} is not allowed; choose one of: "
                f"{', '.join(COMMANDS)}\n",
                file=sys.stderr,
            )
            print(msg, file=sys.stderr)
            return 2
        print(msg)
        return 0
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
