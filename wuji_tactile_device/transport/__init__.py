"""Transports for a collection's data and metadata streams."""
from .base import (DEFAULT_QUEUE_LIMIT, Event, LivelinessChange, Message, ProducerLink, Stream, Subscription,
                   Transport, stream_key, validate_collection_id)

__all__ = ["DEFAULT_QUEUE_LIMIT", "Event", "LivelinessChange", "Message", "ProducerLink", "Stream",
           "Subscription", "Transport", "stream_key", "validate_collection_id"]
