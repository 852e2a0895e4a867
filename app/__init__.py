"""CryptoBench: benchmark cryptographic schemes the way they are deployed."""

__version__ = "0.2.0"
