"""Command line: `python -m pipeline <stage> --config CONFIG [paths]`.

Paths come from the Makefile. Input and config problems print one line (`error: ...`) and exit
non-zero (2 for config errors); `--debug` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import glob
import logging
import sys
from pathlib import Path

from pipeline.config import STAGES, load_config, stamp_text
from pipeline.errors import PipelineError


def write_stamps(config, out_dir: Path) -> list[str]:
    """Write each stage's parameter stamp only when its content changed (so Make sees changes)."""
    changed = []
    params_dir = out_dir / ".params"
    params_dir.mkdir(parents=True, exist_ok=True)
    for stage in STAGES:
        path = params_dir / f"{stage}.json"
        text = stamp_text(config, stage)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(stage)
    return changed


def make_vars(config) -> str:
    """Make variables for this config: the output folder and the input files to depend on."""
    for path in config.inputs:
        if " " in path:
            raise PipelineError(f"input path '{path}' contains a space, which Make cannot track")
    literal = [p for p in config.inputs if not glob.has_magic(p)]
    patterns = [p for p in config.inputs if glob.has_magic(p)]
    return (
        f"OUT := {config.output_dir.rstrip('/') or '.'}\n"
        f"INPUT_FILES := {' '.join(literal)}\n"
        f"INPUT_GLOBS := {' '.join(patterns)}\n"
    )


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_: str, *paths: str) -> None:
        p = sub.add_parser(name, help=help_, parents=[common])
        p.add_argument("--config", required=True, type=Path)
        for path in paths:
            p.add_argument(f"--{path}", required=True, type=Path)

    command("ingest", "input files -> documents + rejected", "out", "rejected")
    command("embed", "documents -> embeddings", "documents", "out")
    command("cluster", "documents + embeddings -> clusters", "documents", "embeddings", "out")
    command("label", "documents + clusters -> topics", "documents", "clusters", "out")
    command("render", "all tables -> index.html", "documents", "clusters", "topics", "out")
    command("makevars", "write Make variables and parameter stamps for a config", "out")
    command("stamps", "write the per-stage parameter stamps for a config")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("BERTopic").setLevel(logging.WARNING)
    try:
        config = load_config(args.config)
        if args.command == "makevars":
            from pipeline.tables import write_text

            text = make_vars(config)
            write_stamps(config, Path(config.output_dir))
            write_text(args.out, text)
        elif args.command == "stamps":
            write_stamps(config, Path(config.output_dir))
        elif args.command == "ingest":
            from pipeline import ingest

            ingest.run(config, args.out, args.rejected)
        elif args.command == "embed":
            from pipeline import embed

            embed.run(config.embed, args.documents, args.out)
        elif args.command == "cluster":
            from pipeline import cluster

            cluster.run(config.cluster, args.documents, args.embeddings, args.out)
        elif args.command == "label":
            from pipeline import label

            label.run(config.label, args.documents, args.clusters, args.out)
        elif args.command == "render":
            from pipeline import render

            render.run(config.render, args.documents, args.clusters, args.topics, args.out)
    except PipelineError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
