"""TLS 1.3 as deployed: the tls13 job's stack adapter, certificates and job bodies."""
