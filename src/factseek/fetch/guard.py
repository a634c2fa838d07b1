"""SSRF guard: which addresses a fetch may connect to.

Every hop (the first request and each redirect) resolves its host once, refuses the request if
*any* address is internal, and then connects to the address that was checked (the URL's host
is replaced by that IP; ``Host`` and TLS SNI keep the name), so DNS cannot answer differently
between the check and the connection (rebinding).

Internal is decided by the address's own properties (Python's ``ipaddress``) and by the IANA
special-purpose address registries (``SPECIAL_PURPOSE``: every block they list as not globally
reachable, which Python's ``is_global`` lags behind on, e.g. ``3fff::/20`` documentation, RFC 9637,
and ``5f00::/16`` SRv6 SIDs, RFC 9602), after normalisation:

1. IPv6 forms that carry an IPv4 address are unwrapped and judged by that IPv4 address:
   IPv4-mapped ``::ffff:a.b.c.d``, IPv4-translated ``::ffff:0:a.b.c.d``, IPv4-compatible
   ``::a.b.c.d``, 6to4 ``2002:AABB:CCDD::/48``, NAT64 ``64:ff9b::/96`` (RFC 6052) and Teredo
   (the client address; Teredo is not global in any case). The local-use NAT64 prefix
   ``64:ff9b:1::/48`` (RFC 8215) is internal by definition.
2. Refused: a known cloud metadata endpoint, loopback, link-local, multicast, unspecified,
   site-local (``fec0::/10``), private (RFC 1918, unique-local ``fc00::/7``...), any block of the
   IANA registries that is not globally reachable (named with its RFC), reserved, and anything
   else whose ``is_global`` is false.

Allow-list entries (``allow_hosts``) are host names (exact, lower case), IP addresses or CIDR
networks.
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


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215 local-use prefix
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765


#: IANA IPv4 and IPv6 Special-Purpose Address Registries (as of 2025): the blocks not globally
#: reachable, with what they are. Blocks the pages above cover by their own rule (loopback,
#: RFC 1918, link-local, unique-local, multicast, the IPv4-in-IPv6 forms) are listed too, so the
#: table alone is the registry; the globally reachable exceptions inside 192.0.0.0/24 and
#: 2001::/23 (anycast services, AMT, AS112, ORCHIDv2, DETs) are not.
SPECIAL_PURPOSE: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(net), what)
    for net, what in (
        ("0.0.0.0/8", "this network (RFC 791)"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("100.64.0.0/10", "shared address space (RFC 6598)"),
        ("127.0.0.0/8", "loopback (RFC 1122)"),
        ("169.254.0.0/16", "link-local (RFC 3927)"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.0.0.0/29", "DS-Lite (RFC 7335)"),
        ("192.0.0.8/32", "IPv4 dummy address (RFC 7600)"),
        ("192.0.0.170/31", "NAT64/DNS64 discovery (RFC 7050)"),
        ("192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)"),
        ("192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("198.18.0.0/15", "benchmarking (RFC 2544)"),
        ("198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)"),
        ("203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)"),
        ("240.0.0.0/4", "reserved (RFC 1112)"),
        ("255.255.255.255/32", "limited broadcast (RFC 919)"),
        ("::/128", "unspecified (RFC 4291)"),
        ("::1/128", "loopback (RFC 4291)"),
        ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation (RFC 8215)"),
        ("100::/64", "discard-only (RFC 6666)"),
        ("100:0:0:1::/64", "dummy IPv6 prefix (RFC 9780)"),
        ("2001:2::/48", "benchmarking (RFC 5180)"),
        ("2001:10::/28", "deprecated ORCHID (RFC 4843)"),
        ("2001:db8::/32", "documentation (RFC 3849)"),
        ("3fff::/20", "documentation (RFC 9637)"),
        ("5f00::/16", "SRv6 SIDs (RFC 9602)"),
        ("fc00::/7", "unique-local (RFC 4193)"),
        ("fe80::/10", "link-local unicast (RFC 4291)"),
        ("fec0::/10", "deprecated site-local (RFC 3879)"),
        ("ff00::/8", "multicast (RFC 4291)"),
        ("224.0.0.0/4", "multicast (RFC 5771)"),
    )
)
#: Inside 192.0.0.0/24 and 2001::/23 the registry marks every block not globally reachable
#: except these few (which ``is_global`` may still refuse: being stricter is safe).
_IETF_BLOCKS = (ipaddress.ip_network("192.0.0.0/24"), ipaddress.ip_network("2001::/23"))
_IETF_GLOBAL = tuple(
    ipaddress.ip_network(n)
    for n in (
        "192.0.0.9/32",  # Port Control Protocol anycast (RFC 7723)
        "192.0.0.10/32",  # TURN anycast (RFC 8155)
        "2001::/32",  # Teredo: judged by its client address above
        "2001:1::1/128",  # PCP anycast (RFC 7723)
        "2001:1::2/128",  # TURN anycast (RFC 8155)
        "2001:1::3/128",  # DNS-SD SRP anycast (RFC 9665)
        "2001:3::/32",  # AMT (RFC 7450)
        "2001:4:112::/48",  # AS112-v6 (RFC 7535)
        "2001:20::/28",  # ORCHIDv2 (RFC 7343)
        "2001:30::/28",  # drone remote ID DETs (RFC 9374)
    )
)


def special_purpose(ip: IPAddress) -> str | None:
    """What the IANA special-purpose registries call ``ip``'s block, when it is not globally
    reachable; None otherwise."""
    for net, what in SPECIAL_PURPOSE:
        if ip.version == net.version and ip in net:
            return what
    if any(ip.version == b.version and ip in b for b in _IETF_BLOCKS) and not any(
        ip.version == g.version and ip in g for g in _IETF_GLOBAL
    ):
        return "IETF protocol assignments (RFC 6890)"
    return None


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """``(form, IPv4 address)`` when ``ip`` carries an IPv4 address (see the module doc)."""
    if ip.ipv4_mapped is not None:
        return "ipv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "teredo", ip.teredo[1]
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in NAT64:
        return "nat64", low32
    if ip in _IPV4_TRANSLATED:
        return "ipv4-translated", low32
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # not :: or ::1, judged as themselves
        return "ipv4-compatible", low32
    return None


def _own_reason(ip: IPAddress) -> str | None:
    if ip in METADATA_ADDRESSES:
        return "cloud-metadata"
    attrs = ("loopback", "link_local", "multicast", "unspecified", "site_local", "private")
    for attr in attrs:
        if getattr(ip, f"is_{attr}", False):
            return attr.replace("_", "-")
    if ip in NAT64_LOCAL:
        return "nat64-local-use"
    what = special_purpose(ip)
    if what is not None:
        return f"special-purpose: {what}"
    if not ip.is_global:
        return "not-global"
    return None


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is internal ("loopback", "private", ...), or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        wrapped = embedded_ipv4(ip)
        if wrapped is not None:
            form, v4 = wrapped
            reason = _own_reason(v4)
            if reason is not None:
                return reason if form == "ipv4-mapped" else f"{reason} via {form}"
            return "not-global via teredo" if form == "teredo" else None
    if ip in METADATA_ADDRESSES:
        return "cloud-metadata"
    reason = _own_reason(ip)
    if reason == "not-global" and getattr(ip, "is_reserved", False):
        return "reserved"
    return reason


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
