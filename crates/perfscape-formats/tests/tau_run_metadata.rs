//! A TAU run's metadata blocks, read against the first thread's (`tau::run`'s template).

use perfscape_formats::{CacheMode, OpenOptions, open};
use std::fs;
use std::path::Path;

fn opts() -> OpenOptions<'static> {
    OpenOptions::default()
}

/// Metadata blocks read against the first thread's (the run's first file as template) give
/// each thread the pairs its file holds, as that file loaded alone (read by name) gives them:
/// pairs reordered, respaced, with other values, new, missing, listed twice, or with entities.
#[test]
fn metadata_read_against_the_first_threads_gives_each_threads_own_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let attr = |k: &str, v: &str| format!("<attribute><name>{k}</name><value>{v}</value></attribute>");
    let file = |attrs: &[String]| {
        format!(
            "1 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls # <metadata>{}</metadata>\n\"main\" 1 0 5 5 0 GROUP=\"TAU_DEFAULT\" \n0 aggregates\n",
            attrs.concat()
        )
    };
    let first = [
        attr("Metric Name", "TIME"),
        attr("Hostname", "vm"),
        attr("pid", "100"),
        attr("CPU Cores", "2"),
        attr("Cmd", "a &amp; b"),
        attr("Dup", "x"),
        attr("Dup", "y"),
    ];
    let blocks: Vec<Vec<String>> = vec![
        first.to_vec(),
        // Another pid, the same otherwise.
        [&first[..2], &[attr("pid", "101")], &first[3..]].concat(),
        // Reordered, a key missing, a new key, another value of a duplicate.
        vec![
            attr("Metric Name", "TIME"),
            attr("CPU Cores", "2"),
            attr("Hostname", "vm"),
            attr("New", "n"),
            attr("Dup", "y"),
        ],
        // Respaced (read by the XML parser), a value with an entity.
        vec![
            format!(" {}", attr("Hostname", "vm")),
            attr("Cmd", "a &lt; b"),
            attr("pid", "103"),
        ],
        // No metadata at all.
        vec![],
    ];
    for (rank, attrs) in blocks.iter().enumerate() {
        let text = if attrs.is_empty() {
            "1 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n\"main\" 1 0 5 5 0 GROUP=\"TAU_DEFAULT\" \n0 aggregates\n".to_string()
        } else {
            file(attrs)
        };
        fs::write(dir.path().join(format!("profile.{rank}.0.0")), text).unwrap();
    }
    let load = |path: &Path, threads| {
        open(
            path,
            &OpenOptions {
                threads: Some(threads),
                cache: CacheMode::Off,
                ..opts()
            },
        )
        .unwrap()
    };
    let (one, many) = (load(dir.path(), 1), load(dir.path(), 4));
    assert!(
        one.profile == many.profile,
        "profiles differ between 1 and 4 worker threads"
    );
    let sorted = |mut v: Vec<(String, String)>| {
        v.sort();
        v
    };
    let p = &one.profile;
    for rank in 0..blocks.len() {
        let alone = load(&dir.path().join(format!("profile.{rank}.0.0")), 1);
        let want: Vec<(String, String)> = alone
            .profile
            .metadata()
            .for_thread(perfscape_model::ThreadIndex(0))
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let got: Vec<(String, String)> = p
            .metadata()
            .for_thread(perfscape_model::ThreadIndex(rank as u32))
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(sorted(got), sorted(want.clone()), "thread {rank}");
        // By hand: the first value of a key listed twice, entities decoded, no `Metric Name`.
        if rank == 0 {
            assert_eq!(
                sorted(want),
                sorted(
                    [
                        ("Hostname", "vm"),
                        ("pid", "100"),
                        ("CPU Cores", "2"),
                        ("Cmd", "a & b"),
                        ("Dup", "x")
                    ]
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .to_vec()
                )
            );
        }
    }
    assert_eq!(
        p.metadata().get_common("Hostname"),
        None,
        "thread 4 has no Hostname"
    );
    assert_eq!(
        p.metadata().get(perfscape_model::ThreadIndex(2), "Dup"),
        Some("y")
    );
    assert_eq!(
        p.metadata().get(perfscape_model::ThreadIndex(3), "Cmd"),
        Some("a < b")
    );
}
