"""A scheme's sender and receiver connected as a session connects them, for the scheme tests."""

from __future__ import annotations

from app.core.schemes.base import Receiver, Scheme, Sender


def connect(scheme: Scheme, sender_scheme: Scheme | None = None) -> tuple[Sender, Receiver, bytes]:
    """A new sender and receiver, the receiver's published material passed through both
    handshakes; `sender_scheme` puts another backend's sender against this receiver."""
    sender, receiver = (sender_scheme or scheme).new_sender(), scheme.new_receiver()
    public = receiver.setup()
    receiver.handshake(sender.handshake(public))
    return sender, receiver, public
