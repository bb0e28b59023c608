"""infx-cookbook-sync: keep the SGLang cookbook's AgentX explorer true to InferenceX runs."""

__version__ = "0.1.0"
