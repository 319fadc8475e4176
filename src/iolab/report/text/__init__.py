"""Texts for the commands other than report: env, controllers, history."""
