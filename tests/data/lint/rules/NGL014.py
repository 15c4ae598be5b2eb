"""NGL014: TASK_QUEUE_ENABLE=2 set in code."""
import os

os.environ["TASK_QUEUE_ENABLE"] = "2"  # expect: NGL014
os.environ.update(TASK_QUEUE_ENABLE="2")  # expect: NGL014
os.environ["TASK_QUEUE_ENABLE"] = "1"
os.environ.setdefault("TASK_QUEUE_ENABLE", "0")
