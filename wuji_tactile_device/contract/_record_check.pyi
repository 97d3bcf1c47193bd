# Type stub of the compiled run check (_native/record_check.c; built at install, optional).
ABI: int

def check_run(events: list, start: int, count: int, item: int, size: int, template: bytes, spans: bytes,
              forces_offset: int, values: int, /) -> bool: ...
