"""Herald's capacity model: from scale-out measurements to a capacity report.

Typical use::

    from herald_capacity import build_report
    build_report("runs/2025-06-01", targets=[25000]).write("report.html", "report.json")

or, from points::

    from herald_capacity import fit_usl
    fit = fit_usl([1, 2, 4, 8], [955, 1879, 3549, 6531])
    fit.interval("sigma"), fit.ceiling().describe(), fit.replicas_for(5000)

Modules: :mod:`~herald_capacity.models` (Amdahl, USL, fitting, ceilings, replicas),
:mod:`~herald_capacity.bootstrap`, :mod:`~herald_capacity.runs` (run folders, Locust history,
plateau), :mod:`~herald_capacity.analysis`, :mod:`~herald_capacity.report` (HTML and JSON).
"""

from .analysis import Analysis, ModelResult, analyse
from .bootstrap import BootstrapResult, ReplicaInterval, bootstrap
from .errors import (CapacityError, InsufficientDataError, ModelDoesNotApplyError, PlateauError,
                     RunFormatError)
from .measurements import Efficiency, Point, efficiency
from .models import (Ceiling, CeilingKind, Interval, Model, Prediction, ReplicaEstimate,
                     ScalabilityFit, Unreachable, amdahl_throughput, exact_two_point_amdahl, fit,
                     fit_amdahl, fit_usl, usl_throughput)
from .report import Report, build_report
from .runs import (HistoryRow, Measurement, Plateau, PlateauSettings, Run, load_run, plateau,
                   read_history, read_points_csv)

__all__ = [
    "Analysis", "BootstrapResult", "CapacityError", "Ceiling", "CeilingKind", "Efficiency",
    "HistoryRow", "InsufficientDataError", "Interval", "Measurement", "Model",
    "ModelDoesNotApplyError", "ModelResult", "Plateau", "PlateauError", "PlateauSettings",
    "Point", "Prediction", "ReplicaEstimate", "ReplicaInterval", "Report", "Run",
    "RunFormatError", "ScalabilityFit", "Unreachable", "amdahl_throughput", "analyse",
    "bootstrap", "build_report", "efficiency", "exact_two_point_amdahl", "fit", "fit_amdahl",
    "fit_usl", "load_run", "plateau", "read_history", "read_points_csv", "usl_throughput",
]
