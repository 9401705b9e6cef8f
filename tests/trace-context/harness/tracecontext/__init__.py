from .traceparent import BaseTraceparent, Traceparent
from .tracestate import Tracestate

__all__ = (
	'BaseTraceparent',
	'Traceparent',
	'Tracestate',
)
