"""The SGLang flag vocabulary: every spelling of one flag, read as one.

Recipes, rendered blocks, logged command lines and cookbook modules spell the parallelism and a
few other flags several ways (``--tp``, ``--tp-size``, ``--tensor-parallel-size``,
``tensor_parallel_size`` as a recipe key). Rendering, log-to-point mapping, the comparison and
the reviewer diff all read them through this module, so a new alias is added once.
"""

from __future__ import annotations

# SGLang's aliases of one flag, by the ``--dashed`` spelling; the value is the flag they mean.
FLAG_ALIASES = {
    "--tp": "--tensor-parallel-size",
    "--tp-size": "--tensor-parallel-size",
    "--dp": "--data-parallel-size",
    "--dp-size": "--data-parallel-size",
    "--ep": "--expert-parallel-size",
    "--ep-size": "--expert-parallel-size",
    "--pp": "--pipeline-parallel-size",
    "--pp-size": "--pipeline-parallel-size",
    "--model": "--model-path",
    "--tokenizer": "--tokenizer-path",
}

# The canonical flags of the parallelism that names a deployment (what ``canonical_flag``
# returns for every spelling).
TP_FLAG = "--tensor-parallel-size"
EP_FLAG = "--expert-parallel-size"
DP_FLAG = "--data-parallel-size"
DP_ATTENTION_FLAG = "--enable-dp-attention"
HICACHE_FLAG = "--enable-hierarchical-cache"
MODEL_PATH_FLAG = "--model-path"

# Parallelism as recipe keys (no dashes), under every spelling recipes use: points are matched
# on them and labels built from them, so each must be a whole number (srt-slurm passes them on
# as CLI values).
TP_ARGS = ("tensor-parallel-size", "tensor_parallel_size", "tp-size", "tp_size", "tp")
EP_ARGS = ("expert-parallel-size", "expert_parallel_size", "ep-size", "ep_size", "ep")
DP_ARGS = ("data-parallel-size", "data_parallel_size", "dp-size", "dp_size", "dp")
DPA_ARGS = ("enable-dp-attention", "enable_dp_attention")
SIZE_ARGS = frozenset((*TP_ARGS, *EP_ARGS, *DP_ARGS))


def canonical_flag(flag: str) -> str:
    """One name per flag: ``_`` spelled ``-`` and SGLang's aliases resolved (``--tp`` is
    ``--tensor-parallel-size``). A value that is not a ``--flag`` is returned unchanged."""
    name = "--" + flag.lstrip("-").replace("_", "-") if flag.startswith("--") else flag
    return FLAG_ALIASES.get(name, name)
