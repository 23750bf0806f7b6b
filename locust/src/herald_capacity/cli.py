"""Command line: ``python -m herald_capacity report RUN_DIR --target 25000 --out report.html``.

Subcommands:
  report SOURCE   HTML report (and JSON summary) from a run folder or a points CSV
  points RUN_DIR  the plateau of each N as CSV (n,throughput,spread,samples), which ``report``
                  also accepts as SOURCE

Exit status: 0 on success (also when a model is refused for too few points: the report says
why), 2 on unusable input (message on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from .errors import CapacityError
from .report import build_report
from .runs import PlateauSettings, load_run


def _positive(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return number


def _plateau_options(parser: argparse.ArgumentParser) -> None:
    defaults = PlateauSettings()
    group = parser.add_argument_group("plateau (run folders)")
    group.add_argument("--warmup", type=float, default=defaults.warmup_s, metavar="SECONDS",
                       help="seconds skipped after the user count reaches its maximum "
                            "(default %(default)s)")
    group.add_argument("--cooldown", type=float, default=defaults.cooldown_s, metavar="SECONDS",
                       help="seconds dropped before the end of full load (default %(default)s)")
    group.add_argument("--tail", type=float, default=None, metavar="SECONDS",
                       help="use only the last SECONDS of the plateau (default: all of it)")
    group.add_argument("--min-samples", type=int, default=defaults.min_samples,
                       help="fewer plateau rows than this is an error (default %(default)s)")


def _settings(args: argparse.Namespace) -> PlateauSettings:
    return PlateauSettings(warmup_s=args.warmup, cooldown_s=args.cooldown, tail_s=args.tail,
                           min_samples=args.min_samples)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m herald_capacity",
                                     description="Herald capacity model: scale-out reports.")
    sub = parser.add_subparsers(dest="command", required=True)

    report = sub.add_parser("report", help="write the HTML report and JSON summary")
    report.add_argument("source", type=Path,
                        help="run folder (runs/<run-id>/ with n=<N>/ folders) or a points CSV "
                             "(columns n,throughput[,spread])")
    report.add_argument("--out", type=Path, required=True, help="HTML report to write")
    report.add_argument("--json", type=Path, default=None,
                        help="JSON summary to write (default: --out with .json)")
    report.add_argument("--target", type=_positive, action="append", default=[],
                        metavar="REQ_PER_S", help="target throughput to find replicas for "
                                                  "(repeatable)")
    report.add_argument("--predict", type=_positive, action="append", default=[], metavar="N",
                        help="replica count to predict throughput at (repeatable)")
    report.add_argument("--confidence", type=float, default=0.95,
                        help="confidence level of intervals (default %(default)s)")
    report.add_argument("--bootstrap", type=int, default=1000, metavar="RESAMPLES",
                        help="residual bootstrap refits, 0 to skip (default %(default)s)")
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed (default %(default)s)")
    report.add_argument("--title", default=None, help="report title")
    report.add_argument("--no-plots", action="store_true", help="leave the figures out")
    _plateau_options(report)

    points = sub.add_parser("points", help="print each N's plateau as CSV")
    points.add_argument("run_dir", type=Path, help="run folder (runs/<run-id>/)")
    _plateau_options(points)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "points":
            run = load_run(args.run_dir, _settings(args))
            print("n,throughput,spread,samples")
            for p in run.points:
                print(f"{p.n:g},{p.throughput:.6g},{p.spread:.6g},{p.samples}")
            for caveat in run.caveats():
                print(f"caveat: {caveat}", file=sys.stderr)
            return 0
        if not 0 < args.confidence < 1:
            raise CapacityError(f"--confidence must be between 0 and 1, got {args.confidence}")
        report = build_report(args.source, targets=args.target, predict_at=args.predict,
                              confidence=args.confidence, bootstrap_resamples=args.bootstrap,
                              seed=args.seed, plateau_settings=_settings(args), title=args.title)
        json_path = args.json or args.out.with_suffix(".json")
        report.write(args.out, json_path, with_plots=not args.no_plots)
    except (CapacityError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    a = report.analysis
    print(f"wrote {args.out} and {json_path}")
    for r in a.results:
        if r.fit is None:
            print(r.refusal)
        else:
            exact = " (exact, no error bar)" if r.fit.exact else ""
            print(f"{r.model.title}{exact}: {r.fit.ceiling().describe()}")
            for estimate in r.replicas:
                print(f"  {estimate.message}")
    for caveat in a.caveats:
        print(f"caveat: {caveat}")
    return 0
