"""Versioned prompt templates, shipped as package data (one folder per version)."""
