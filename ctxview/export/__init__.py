"""Request bodies as a provider accepts them (`ctxview prepare`, the inspector's `w`)."""
