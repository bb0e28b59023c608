"""What ran: run artifacts, srt-slurm sweep logs, `/use` pins."""
