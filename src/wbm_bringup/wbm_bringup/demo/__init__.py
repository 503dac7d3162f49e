"""The one-command demo: scenario (hand motion and push), run, report and plots."""
