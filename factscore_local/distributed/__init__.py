"""Past one machine: the estimator and the dense index build on a Ray cluster.

Ray is an optional extra (``pip install 'factscore-local[ray]'``); nothing here imports it
until a Ray engine runs. ``evaluate_with_ray`` is ``fscore eval --engine ray``,
``build_index_with_ray`` is ``fscore build-index --engine ray``.
"""

from factscore_local.distributed.cluster import RayEngineError, check_reachable
from factscore_local.distributed.ray_build import build_index_with_ray, embed_with_ray
from factscore_local.distributed.ray_eval import RayEvaluation, evaluate_with_ray

__all__ = [
    "RayEngineError",
    "RayEvaluation",
    "build_index_with_ray",
    "check_reachable",
    "embed_with_ray",
    "evaluate_with_ray",
]
