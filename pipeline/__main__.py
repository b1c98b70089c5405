"""Command line: `python -m pipeline <stage> --config CONFIG [paths]`.

Paths come from the Makefile. Input and config problems print one line (`error: ...`) and exit
non-zero (2 for config errors); `--debug` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import glob
import logging
import sys
import time
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

    def command(name: str, help_: str, *paths: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, parents=[common])
        p.add_argument("--config", required=True, type=Path)
        for path in paths:
            p.add_argument(f"--{path}", required=True, type=Path)
        return p

    command("ingest", "input files -> documents + rejected", "out", "rejected")
    command("embed", "documents -> embeddings", "documents", "out")
    command("cluster", "documents + embeddings -> clusters", "documents", "embeddings", "out")
    label = command("label", "documents + clusters -> topics", "documents", "clusters", "out")
    label.add_argument(
        "--embeddings", type=Path, help="default: embeddings.parquet beside the documents"
    )
    # quality figures and the venue comparison (pipeline/metrics.py, compare.py, quality.py)
    command("metrics", "-> metrics.json", "documents", "clusters", "topics", "out")
    command("compare", "-> venue_topics.parquet", "documents", "clusters", "topics", "out")
    command("stability", "-> stability.json", "documents", "embeddings", "clusters", "out")
    command("baseline", "-> baseline.json (BERTopic defaults)", "documents", "embeddings", "out")
    command(
        "render",
        "all tables -> index.html + map.html",
        "documents",
        "embeddings",
        "clusters",
        "topics",
        "out",
    )
    command("makevars", "write Make variables and parameter stamps for a config", "out")
    command("stamps", "write the per-stage parameter stamps for a config")
    return parser


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("BERTopic").setLevel(logging.WARNING)
    if args.command in ("cluster", "label", "stability", "baseline"):
        from pipeline import numba_cache

        numba_cache.enable()  # before umap/hdbscan/bertopic are imported
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

            embeddings = args.embeddings or args.documents.parent / "embeddings.parquet"
            label.run(config.label, args.documents, args.clusters, args.out, embeddings)
        elif args.command == "metrics":
            from pipeline import metrics

            metrics.run(config.label, args.documents, args.clusters, args.topics, args.out)
        elif args.command == "compare":
            from pipeline import compare

            compare.run(config.compare, args.documents, args.clusters, args.topics, args.out)
        elif args.command == "stability":
            from pipeline import quality

            quality.run_stability(
                config.cluster, config.quality, args.documents, args.embeddings, args.clusters,
                args.out,
            )  # fmt: skip
        elif args.command == "baseline":
            from pipeline import quality

            quality.run_baseline(config.quality, args.documents, args.embeddings, args.out)
        elif args.command == "render":
            from pipeline import render

            render.run(
                config.render,
                documents_path=args.documents,
                embeddings_path=args.embeddings,
                clusters_path=args.clusters,
                topics_path=args.topics,
                out_path=args.out,
            )
    except PipelineError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a folder that cannot be written, a full disk, ...
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        reason = exc.strerror or str(exc)
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            reason = "a file stands where a folder is needed"
        print(f"error: {where}{reason}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: outputs are written atomically, so nothing is half-done
        if args.debug:
            raise
        print("error: interrupted", file=sys.stderr)
        return 130
    if args.command in STAGES:
        log_resources(args.command, started)
    return 0


def log_resources(stage: str, started: float) -> None:
    """One line per stage with its wall time and peak memory (read by `make bench`)."""
    import resource

    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    seconds = time.perf_counter() - started
    logging.getLogger("pipeline").info(
        "stage %s: %.2f s wall, peak memory %.0f MB", stage, seconds, peak_kb / 1024
    )


if __name__ == "__main__":
    sys.exit(main())
