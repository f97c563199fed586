"""Code the grader copies into the scoring container (never imported by the host)."""
