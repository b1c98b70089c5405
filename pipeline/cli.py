"""Command line: `topicmap build`, `topicmap stage NAME` (or `python -m pipeline NAME`), and the
helpers the Makefile calls (`deps`, `makevars`, `stamps`).

Paths default to the config's output folder; the Makefile passes them all. Input and config
problems print one line (`error: ...`) and exit non-zero (2 for config errors, 130 when
interrupted); `--debug` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import glob
import logging
import os
import sys
from pathlib import Path

from pipeline import progress, timings
from pipeline.commands import COMMANDS, FILES, Command, run_command, write_stamps
from pipeline.config import Config, load_config
from pipeline.encoder import modes_path
from pipeline.errors import ConfigError, PipelineError

DEFAULT_CONFIG = Path("configs/default.yaml")
log = logging.getLogger("pipeline")


def make_vars(config: Config) -> str:
    """Make variables for this config: the output folder, the input files to depend on, the
    bench's measured embedding modes (`auto`'s precision, in the embed stamp) and the engine
    (with Ray, the documents shards are made before the embed stage)."""
    for path in config.inputs:
        if " " in path:
            raise PipelineError(f"input path '{path}' contains a space, which Make cannot track")
    literal = [p for p in config.inputs if not glob.has_magic(p)]
    patterns = [p for p in config.inputs if glob.has_magic(p)]
    return (
        f"OUT := {config.output_dir.rstrip('/') or '.'}\n"
        f"INPUT_FILES := {' '.join(literal)}\n"
        f"INPUT_GLOBS := {' '.join(patterns)}\n"
        f"EMBED_MODES := {str(modes_path(config.embed) or '').replace(' ', '?')}\n"
        f"ENGINE := {config.engine.kind}\n"
    )


def _config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="default: %(default)s")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a config setting for this run (repeatable)",
    )


def _stage_parser(sub, name: str, help_: str, parents) -> None:
    command = COMMANDS[name]
    parser = sub.add_parser(name, help=help_, parents=parents)
    _config_options(parser)
    for file in command.files:
        parser.add_argument(
            f"--{file.replace('_', '-')}",
            dest=file,
            type=Path,
            metavar="PATH",
            help=f"default: <output_dir>/{FILES[file]}",
        )
    for flag, help_ in command.flags:
        parser.add_argument(f"--{flag}", action="store_true", help=help_)


def _serve_parser(sub, parents) -> None:
    serve = sub.add_parser(
        "serve",
        parents=parents,
        help="serve a finished build's pages, search by meaning and placing an abstract",
    )
    source = serve.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="default: %(default)s")
    source.add_argument("--dir", type=Path, metavar="OUTPUT_DIR", help="a build's output folder")
    serve.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    serve.add_argument("--host", default="127.0.0.1", help="default: %(default)s (this machine)")
    serve.add_argument("--port", type=int, default=8000, help="default: %(default)s; 0: any free")
    serve.add_argument("--cors", metavar="ORIGIN", help="let pages of ORIGIN call the API")


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    top = argparse.ArgumentParser(prog="topicmap", description=__doc__)
    top.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = top.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="run every stage: report and map", parents=[common])
    _config_options(build)
    stage = sub.add_parser("stage", help="run one stage", parents=[common])
    stages = stage.add_subparsers(dest="stage", required=True)
    for name, command in COMMANDS.items():
        _stage_parser(stages, name, command.help, [common])
        _stage_parser(sub, name, f"= stage {name}", [common])
    place = sub.add_parser(
        "place",
        aliases=["assign"],
        parents=[common],
        help="place the papers of FILE into a build's topic model (`assign`: the same)",
    )
    _config_options(place)
    place.add_argument("file", type=Path, metavar="FILE", help="any input file ingest reads")
    place.add_argument("--model", type=Path, metavar="DIR", help="default: <output_dir>/model")
    place.add_argument("--out", type=Path, metavar="PATH", help="default: <FILE stem>.topics.csv")
    _serve_parser(sub, [common])
    deps = sub.add_parser("deps", help="write the Makefile's code prerequisites", parents=[common])
    deps.add_argument("--out", type=Path, required=True)
    makevars = sub.add_parser(
        "makevars", help="write Make variables and parameter stamps", parents=[common]
    )
    _config_options(makevars)
    makevars.add_argument("--out", type=Path, required=True)
    stamps = sub.add_parser("stamps", help="write the parameter stamps", parents=[common])
    _config_options(stamps)
    return top


def dispatch(args: argparse.Namespace) -> None:
    from pipeline import tables

    if args.command == "deps":
        from pipeline.makedeps import make_include

        tables.write_text(args.out, make_include(Path.cwd()))
        return
    if args.command == "serve":
        from pipeline import serve

        if args.dir and args.set:  # the build's own settings are served: say so, not ignore
            raise ConfigError("serve --dir serves the build's own settings: --set needs --config")
        config = None if args.dir else load_config(args.config, args.set)
        folder = args.dir or Path(config.output_dir)
        serve.serve(folder, config, args.host, args.port, args.cors)
        return
    config = load_config(args.config, args.set)
    if args.command == "build":
        from pipeline import api

        api.build(config)
    elif args.command in ("place", "assign"):
        from pipeline import place

        place.run(args.file, config, args.model, args.out)
    elif args.command == "makevars":
        write_stamps(config, Path(config.output_dir))
        tables.write_text(args.out, make_vars(config))
    elif args.command == "stamps":
        write_stamps(config, Path(config.output_dir))
    else:
        name = args.stage if args.command == "stage" else args.command
        command = COMMANDS[name]
        paths = {f: getattr(args, f) for f in command.files}
        out = output_folder(command, paths, config)
        started = timings.begin(out, name)
        run_command(name, config, paths, {f: getattr(args, f) for f, _ in command.flags})
        log_resources(out, command, config, started)


def prepare_process(args: argparse.Namespace) -> None:
    """This process is the CLI's own: logging to stderr, no model hub, and compiled numba code
    kept in .cache/numba for the next process (before umap/hdbscan/bertopic are imported)."""
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("BERTopic").setLevel(logging.WARNING)
    for name, value in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("TOKENIZERS_PARALLELISM", "false"),
    ):
        os.environ.setdefault(name, value)
    name = getattr(args, "stage", None) or args.command
    if name == "build" or (name in COMMANDS and COMMANDS[name].compiles):
        from pipeline import numba_cache

        numba_cache.enable(Path(".cache/numba"))


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    prepare_process(args)
    try:
        with progress.logs_above_bars():
            dispatch(args)
    except PipelineError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a folder that cannot be written, a full disk, ...
        if args.debug:
            raise
        print(f"error: {describe_os_error(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: outputs are written atomically, so nothing is half-done
        if args.debug:
            raise
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0


def describe_os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    reason = exc.strerror or str(exc)
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        reason = "a file stands where a folder is needed"
    return where + reason


def output_folder(command: Command, paths: dict[str, Path | None], config: Config) -> Path:
    """The output folder the stage writes into: its first output's (as FILES places that in
    one), or the config's when no path is given."""
    first = command.outputs[0]
    if paths.get(first) is None:
        return Path(config.output_dir)
    return Path(paths[first]).resolve().parents[len(Path(FILES[first]).parts) - 1]


def log_resources(out: Path, command: Command, config: Config, started: float) -> None:
    """One line per stage with its wall time and peak memory, and the same figures in its
    record (`pipeline.timings`: `<out>/.timings/<stage>.json`, which the benches read)."""
    engine = config.engine.kind if command.engine else None
    figures = timings.finish(out, command.name, started, engine)
    log.info(
        "stage %s: %.2f s wall, peak memory %.0f MB",
        command.name,
        figures["wall_s"],
        figures["peak_mb"],
    )
