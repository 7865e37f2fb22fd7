//! Arbitrary bytes to the profile cache decoders: `Profile::decode` on the raw bytes and on
//! the bytes as the payload of a valid header and trailer (correct length and CRC-32, so the
//! checksum does not stop them before the parser), and `parse_cache_file` on the bytes as a
//! whole cache file and as the metadata + profile sections behind a valid file header. Any
//! profile that decodes must re-encode to bytes that decode to the same encoding.

#![no_main]

use libfuzzer_sys::fuzz_target;
use perfscape_formats::cache::{CACHE_FORMAT_VERSION, CACHE_MAGIC, parse_cache_file};
use perfscape_model::Profile;
use perfscape_model::binary::{PROFILE_END, PROFILE_FORMAT_VERSION, PROFILE_MAGIC, checksum};

fn sealed_profile(payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(payload.len() + 32);
    b.extend_from_slice(&PROFILE_MAGIC);
    b.extend_from_slice(&PROFILE_FORMAT_VERSION.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(payload);
    b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    b.extend_from_slice(&checksum(payload).to_le_bytes());
    b.extend_from_slice(&PROFILE_END);
    b
}

fn check(p: Profile) {
    let once = p.encode();
    let again = Profile::decode(&once).expect("a re-encoded profile decodes");
    assert_eq!(again.encode(), once, "encoding is stable");
}

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Profile::decode(data) {
        check(p);
    }
    if let Ok(p) = Profile::decode(&sealed_profile(data)) {
        check(p);
    }
    let _ = parse_cache_file(data);
    // The first byte splits the rest into a metadata section and a profile payload.
    if let Some((&split, rest)) = data.split_first() {
        let at = (split as usize * rest.len()) / 256;
        let (meta, payload) = rest.split_at(at);
        let mut file = Vec::with_capacity(data.len() + 64);
        file.extend_from_slice(&CACHE_MAGIC);
        file.extend_from_slice(&CACHE_FORMAT_VERSION.to_le_bytes());
        file.extend_from_slice(&0u32.to_le_bytes());
        file.extend_from_slice(&(meta.len() as u64).to_le_bytes());
        file.extend_from_slice(&checksum(meta).to_le_bytes());
        file.extend_from_slice(&0u32.to_le_bytes());
        file.extend_from_slice(meta);
        file.extend_from_slice(&sealed_profile(payload));
        if let Ok((p, _report)) = parse_cache_file(&file) {
            check(p);
        }
    }
});
