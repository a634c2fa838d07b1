"""SSRF guard: which addresses a fetch may connect to.

Every hop (the first request and each redirect) resolves its host once, refuses the request if
*any* address is internal, and then connects to the address that was checked (the URL's host
is replaced by that IP; ``Host`` and TLS SNI keep the name), so DNS cannot answer differently
between the check and the connection (rebinding).

Internal means: not globally routable (loopback, RFC 1918 private, link-local, CGNAT,
unspecified, reserved, documentation ranges, IPv6 ULA...), multicast, or a known cloud
metadata endpoint. IPv4-mapped IPv6 addresses are judged by their IPv4 address. Allow-list
entries (``allow_hosts``) are host names (exact, lower case), IP addresses or CIDR networks.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from factseek.errors import BlockedAddress, FetchError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Cloud metadata services, refused even if some cloud made them routable.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
METADATA_HOSTS: frozenset[str] = frozenset(
    {
        "metadata.google.internal",
        "metadata",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is internal ("loopback", "private", ...), or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return "cloud-metadata"
    for attr in ("loopback", "link_local", "multicast", "unspecified", "private", "reserved"):
        if getattr(ip, f"is_{attr}"):
            return attr.replace("_", "-")
    if not ip.is_global:
        return "not-global"
    return None


@dataclass(frozen=True)
class AllowList:
    """Hosts and networks the guard lets through."""

    hosts: frozenset[str]
    networks: tuple[IPNetwork, ...]

    @classmethod
    def parse(cls, entries: Sequence[str]) -> AllowList:
        hosts: set[str] = set()
        nets: list[IPNetwork] = []
        for e in entries:
            e = e.strip().lower()
            if not e:
                continue
            try:
                nets.append(ipaddress.ip_network(e.strip("[]"), strict=False))
            except ValueError:
                hosts.add(e)
        return cls(frozenset(hosts), tuple(nets))

    def allows(self, host: str, ip: IPAddress | None = None) -> bool:
        if host.lower() in self.hosts:
            return True
        return ip is not None and any(ip in n for n in self.networks)


NO_ALLOW = AllowList(frozenset(), ())


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


async def resolve_checked(host: str, port: int, allow: AllowList = NO_ALLOW) -> IPAddress:
    """Resolve ``host`` and return the address to connect to; ``BlockedAddress`` if internal.

    Every address the name resolves to must pass (or be allow-listed): a name that resolves to
    one public and one private address is refused.
    """
    host = host.lower().rstrip(".")
    if host in METADATA_HOSTS and not allow.allows(host):
        raise BlockedAddress(f"blocked host {host} (cloud-metadata)")
    literal = _literal(host)
    if literal is not None:
        addresses = [literal]
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as e:
            raise FetchError(f"cannot resolve {host}: {e}") from None
        found = dict.fromkeys(ipaddress.ip_address(i[4][0]) for i in infos)
        addresses = sorted(found, key=lambda a: a.version)  # IPv4 first: IPv6 is often broken
        if not addresses:
            raise FetchError(f"cannot resolve {host}")
    for ip in addresses:
        reason = blocked_reason(ip)
        if reason and not allow.allows(host, ip):
            raise BlockedAddress(f"blocked address {ip} for {host} ({reason})")
    return addresses[0]
