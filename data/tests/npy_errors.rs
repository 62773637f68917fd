//! A `.npy` that is not one (empty, a CSV under a `.npy` name, a header cut short) is said so in
//! words naming the file, by every reader that opens one; never npyz's "magic not found".

use hullsweep_data::npy::open_npy_file;
use hullsweep_data::{NpySource, read_close, read_close_npy, read_params_npy, write_f64_npy};
use std::path::{Path, PathBuf};

/// Every way this crate opens a `.npy`, each returning its error as text.
fn every_reader(path: &Path) -> Vec<String> {
    vec![
        read_close_npy(path).unwrap_err().to_string(),
        read_params_npy(path).unwrap_err().to_string(),
        NpySource::open(path).err().unwrap().to_string(),
        read_close(path, None).unwrap_err().to_string(),
        open_npy_file(path, 4096).err().unwrap().to_string(),
    ]
}

fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn empty_text_and_cut_files_are_named_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("good.npy");
    write_f64_npy(&good, &[100.0, 101.5, 99.25]).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cases = [
        (
            file(d, "empty.npy", b""),
            "empty.npy: not a valid .npy file: the file is empty (0 bytes), not a .npy array",
        ),
        (
            file(d, "text.npy", b"close\n100\n101.5\n"),
            "text.npy: not a valid .npy file: it does not start with the \\x93NUMPY magic; is \
             it a CSV or text file?",
        ),
        (
            file(d, "tiny.npy", b"x"),
            "tiny.npy: not a valid .npy file: it does not start with the \\x93NUMPY magic",
        ),
        (
            file(d, "magic.npy", &bytes[..6]),
            "magic.npy: not a valid .npy file: the .npy header is cut short (the file ends \
             after 6 bytes)",
        ),
        (
            file(d, "head.npy", &bytes[..9]),
            "head.npy: not a valid .npy file: the .npy header is cut short (the file ends after \
             9 bytes)",
        ),
        (
            file(d, "dict.npy", &bytes[..40]),
            "dict.npy: not a valid .npy file: the .npy header is cut short (the file ends after \
             40 bytes)",
        ),
    ];
    for (path, want) in cases {
        for e in every_reader(&path) {
            assert!(e.starts_with(&path.display().to_string()), "{e}");
            assert!(e.contains(want), "{e}\nwant: {want}");
            assert!(!e.contains("magic not found"), "{e}");
        }
    }
}

#[test]
fn a_good_file_still_opens_and_a_cut_body_is_still_named() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.npy");
    write_f64_npy(&good, &[100.0, f64::NAN, 99.25]).unwrap();
    let back = read_close_npy(&good).unwrap();
    assert_eq!(back.len(), 3);
    assert!(back[1].is_nan());
    let npy = open_npy_file(&good, 16).unwrap();
    assert_eq!(npy.shape(), [3]);
    // The header is whole, the body is not: the decoder's truncation, named as before.
    let bytes = std::fs::read(&good).unwrap();
    let body = file(dir.path(), "body.npy", &bytes[..bytes.len() - 4]);
    let e = read_close_npy(&body).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}: not a valid .npy file", body.display())),
        "{e}"
    );
    assert!(!e.contains("header is cut short"), "{e}");
}

#[test]
fn a_header_claiming_more_bars_than_the_file_holds_is_refused_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    // Version 1.0: magic, version, u16 header length, the dict padded to 64 with '\n' last.
    let mut dict =
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000,), }".to_string();
    while !(10 + dict.len() + 1).is_multiple_of(64) {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    for x in [100.0f64, 101.0, 102.0] {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let path = file(dir.path(), "liar.npy", &bytes);
    // 8 PB would abort the process if allocated; the file's length says there are 3 bars.
    let e = read_close_npy(&path).unwrap_err().to_string();
    assert!(
        e.contains("truncated: the header says 1000000000000000 bars, the file ends after 3"),
        "{e}"
    );
    let e = read_close(&path, None).unwrap_err().to_string();
    assert!(e.contains("the file ends after 3"), "{e}");
    // The streamed reader refuses it on opening, before anyone sweeps on the header's length.
    let e = NpySource::open(&path).err().unwrap().to_string();
    assert!(e.contains("the file ends after 3"), "{e}");
}
