"""CryptoBench: benchmark cryptographic schemes the way they are deployed."""

__version__ = "0.1.0"
