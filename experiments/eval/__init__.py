"""Evaluation: the harness (duplicate deals between agent specs, resumable, local or Ray), its
statistics and points-scale ratings, the luck control variate, the reports and plots, the YAML
configs, and ``ginenv rate``."""
