"""``python -m factscore_local.harness`` prints the task folder for ``--include_path``."""

from factscore_local.harness import task_dir

print(task_dir())
