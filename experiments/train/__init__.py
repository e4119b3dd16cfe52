"""Training: masked PPO against a league (``ppo``, the algorithm; its settings ``args``, networks
``networks``, opponents ``league``, rollout collection ``rollouts``, local or Ray workers
``distributed``, checkpoints ``checkpoints``), behaviour cloning of a level (``bc``) and the
Stable-Baselines3 bridge (``sb3``)."""
