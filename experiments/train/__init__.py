"""Training: masked PPO against a league (``ppo``), behaviour cloning of a level (``bc``) and the
Stable-Baselines3 bridge (``sb3``)."""
