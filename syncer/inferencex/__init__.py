"""InferenceX side: master configs, srt-slurm recipes, rendering, the exclusion policy."""
