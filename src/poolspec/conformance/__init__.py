"""The conformance suite: the case catalogue, the shipped torch 2.13 reference vectors, and the runner.

>>> from poolspec import conformance
>>> report = conformance.run("numpy", ops=["avg_pool2d"])
>>> report.passed
True
"""

from .runner import (
    PHASES,
    CaseResult,
    Implementation,
    NotExpressible,
    Report,
    call_line,
    case,
    case_id,
    case_key,
    case_phases,
    check,
    load_module,
    module_implementation,
    run,
)

__all__ = ["PHASES", "CaseResult", "Implementation", "NotExpressible", "Report", "call_line", "case", "case_id",
           "case_key", "case_phases", "check", "load_module", "module_implementation", "run"]
