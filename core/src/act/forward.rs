//! `std:forward` (spec/004, bridges): an opaque metadata blob for the next
//! component in a chain. A bridge that forwards a call puts the next hop's
//! metadata under `std:forward` (one layer per hop); a bridge level that
//! receives it unwraps exactly one layer and passes that on. Nothing in a
//! layer is interpreted by the bridge that carries it.

use ciborium::Value as Cbor;

use super::decode::DecodeError;
use super::meta_map::MetaMap;

pub const FORWARD: &str = "std:forward";

/// Wraps `inner` (the next hop's metadata) into `outer` (this hop's):
/// `outer["std:forward"] = inner`. Returns the layer it replaced, if any.
pub fn wrap(outer: &mut MetaMap, inner: &MetaMap) -> Option<Cbor> {
    outer.insert(FORWARD, inner.to_value())
}

/// Builds nested metadata for a chain: `hops[0]` is what the first
/// component sees, `hops[1]` is under its `std:forward`, and so on.
pub fn wrap_chain(hops: &[MetaMap]) -> MetaMap {
    let mut iter = hops.iter().rev();
    let mut acc = iter.next().cloned().unwrap_or_default();
    for outer in iter {
        let mut layer = outer.clone();
        wrap(&mut layer, &acc);
        acc = layer;
    }
    acc
}

/// Unwraps one layer: this hop's metadata without `std:forward`, and the
/// next hop's metadata if there is one. A layer that is not a text-keyed
/// map is an error naming what it is.
pub fn unwrap(meta: &MetaMap) -> Result<(MetaMap, Option<MetaMap>), DecodeError> {
    let mut here = meta.clone();
    let next = match here.remove(FORWARD) {
        None => None,
        Some(v) => Some(MetaMap::from_value(&v)?),
    };
    Ok((here, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(id: &str) -> MetaMap {
        MetaMap::from_entries([("std:request-id".to_owned(), Cbor::Text(id.into()))])
    }

    #[test]
    fn one_layer_per_hop() {
        let chain = wrap_chain(&[layer("a"), layer("b"), layer("c")]);
        let (here, next) = unwrap(&chain).unwrap();
        assert_eq!(here, layer("a"));
        let (here, next) = unwrap(&next.unwrap()).unwrap();
        assert_eq!(here, layer("b"));
        let (here, next) = unwrap(&next.unwrap()).unwrap();
        assert_eq!((here, next), (layer("c"), None));
        // Survives encoding.
        let bytes = chain.encode().unwrap();
        assert_eq!(MetaMap::decode(&bytes).unwrap(), chain);
        let bad = MetaMap::from_entries([(FORWARD.to_owned(), Cbor::Integer(1.into()))]);
        assert_eq!(unwrap(&bad).unwrap_err().code(), "NOT_A_MAP");
    }
}
