"""The inspector's screens and dialogs, each over the main view."""
