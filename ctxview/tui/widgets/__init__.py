"""The widgets the inspector's screens are made of."""
