//! A mounted tool's result bounded as the built-in tools' are: at most
//! [`MAX_RESULT_CHARS`] characters of text (text and JSON blocks together,
//! head and tail kept as bash keeps a command's output) and at most
//! [`MAX_RESULT_IMAGES`] images of at most [`MAX_IMAGE_BYTES`] each. What is
//! left out is kept in the session's output folder, where `read` reaches it,
//! and a note in the result says how much was left out and where it is.
//!
//! A result within the bounds comes back unchanged.

use std::fmt::Write as _;

use agentcore_stages::Content;
use base64::Engine as _;

use crate::limits::mcp::{MAX_IMAGE_BYTES, MAX_RESULT_CHARS, MAX_RESULT_IMAGES};
use crate::process::OutputDir;

/// `blocks` of the call `call_id`, bounded; `dir` keeps what is left out
/// (without one, the note says it was not kept).
pub(crate) fn bounded(
    blocks: Vec<Content>,
    call_id: &str,
    dir: Option<&OutputDir>,
) -> Vec<Content> {
    let chars: usize = blocks.iter().map(text_chars).sum();
    let images = blocks
        .iter()
        .filter(|b| matches!(b, Content::Image { .. }))
        .count();
    let big_image = blocks.iter().any(|b| match b {
        Content::Image { data, .. } => decoded_len(data) > MAX_IMAGE_BYTES,
        _ => false,
    });
    if chars <= MAX_RESULT_CHARS && images <= MAX_RESULT_IMAGES && !big_image {
        return blocks;
    }
    let mut out = Vec::with_capacity(blocks.len() + 1);
    let mut notes = Vec::new();
    if chars > MAX_RESULT_CHARS {
        let whole = whole_text(&blocks);
        let kept = keep(dir, &format!("mcp-{call_id}"), whole.as_bytes());
        let (head, tail) = head_and_tail(&whole, MAX_RESULT_CHARS);
        let omitted = chars - head.chars().count() - tail.chars().count();
        out.push(Content::text(format!(
            "{head}\n[Result truncated: {} of {} characters omitted from the middle. {}]\n{tail}",
            thousands(omitted),
            thousands(chars),
            where_kept(
                &kept,
                "Full result",
                "read it with read, using offset and limit"
            )
        )));
    } else {
        out.extend(
            blocks
                .iter()
                .filter(|b| !matches!(b, Content::Image { .. }))
                .cloned(),
        );
    }
    let mut shown_images = 0;
    for (n, block) in blocks.into_iter().enumerate() {
        let Content::Image { media_type, data } = block else {
            continue;
        };
        let size = decoded_len(&data);
        let why = if size > MAX_IMAGE_BYTES {
            format!(
                "it is {} bytes, over the {} bytes an image may have",
                thousands_u64(size),
                thousands_u64(MAX_IMAGE_BYTES)
            )
        } else if shown_images == MAX_RESULT_IMAGES {
            format!("a result shows at most {MAX_RESULT_IMAGES} images")
        } else {
            shown_images += 1;
            out.push(Content::Image { media_type, data });
            continue;
        };
        let kept = match base64::engine::general_purpose::STANDARD.decode(data.as_bytes()) {
            Ok(bytes) => keep(dir, &format!("mcp-{call_id}-image-{n}"), &bytes),
            Err(e) => Err(format!("its base64 data is invalid ({e})")),
        };
        notes.push(format!(
            "[Image {} ({media_type}) left out: {why}. {}]",
            n + 1,
            where_kept(&kept, "Kept at", "read it with read")
        ));
    }
    if !notes.is_empty() {
        out.push(Content::text(notes.join("\n")));
    }
    out
}

/// Characters a block counts toward the text bound.
fn text_chars(block: &Content) -> usize {
    match block {
        Content::Text { text } => text.chars().count(),
        Content::Json { value } => value.to_string().chars().count(),
        Content::Image { .. } => 0,
    }
}

/// Every text and JSON block, in order, one after another (a newline
/// between blocks); images are named where they were.
fn whole_text(blocks: &[Content]) -> String {
    let mut whole = String::new();
    for block in blocks {
        if !whole.is_empty() && !whole.ends_with('\n') {
            whole.push('\n');
        }
        match block {
            Content::Text { text } => whole.push_str(text),
            Content::Json { value } => {
                whole.push_str(&serde_json::to_string_pretty(value).unwrap_or_default())
            }
            Content::Image { media_type, data } => {
                let _ = write!(
                    whole,
                    "[image ({media_type}, {} bytes)]",
                    thousands_u64(decoded_len(data))
                );
            }
        }
    }
    whole
}

/// The first and last characters of `text`, `budget` in all, each half cut
/// at a line end when one is near (within a tenth of the half).
fn head_and_tail(text: &str, budget: usize) -> (&str, &str) {
    let half = budget / 2;
    let head_end = text.char_indices().nth(half).map_or(text.len(), |(i, _)| i);
    let mut head = &text[..head_end];
    if let Some(nl) = head.rfind('\n')
        && head[nl..].chars().count() <= half / 10
    {
        head = &text[..=nl];
    }
    let total = text.chars().count();
    let tail_chars = budget - half;
    let tail_start = text
        .char_indices()
        .nth(total.saturating_sub(tail_chars))
        .map_or(text.len(), |(i, _)| i)
        .max(head.len());
    let mut tail = &text[tail_start..];
    if let Some(nl) = tail.find('\n')
        && tail[..nl].chars().count() <= tail_chars / 10
    {
        tail = &tail[nl + 1..];
    }
    (head, tail)
}

/// Writes `bytes` to a new file of `dir`: its path, or why not.
fn keep(dir: Option<&OutputDir>, stem: &str, bytes: &[u8]) -> Result<String, String> {
    let Some(dir) = dir else {
        return Err("this session keeps no output folder".to_owned());
    };
    let mut file = dir.create(stem).map_err(|e| e.to_string())?;
    file.write(bytes);
    let path = file.path().display().to_string();
    if file.is_cut() {
        let written = file.written();
        file.keep();
        return Err(format!(
            "only its first {} bytes fit the session's output folder, at {path}",
            thousands_u64(written)
        ));
    }
    file.keep();
    Ok(path)
}

fn where_kept(kept: &Result<String, String>, label: &str, how: &str) -> String {
    match kept {
        Ok(path) => format!("{label}: {path} ({how})"),
        Err(why) => format!("It was not kept: {why}"),
    }
}

/// The size of the bytes a base64 text decodes to (padding counted out).
fn decoded_len(data: &str) -> u64 {
    let trimmed = data.trim_end_matches('=');
    (trimmed.len() as u64) * 3 / 4
}

fn thousands(n: usize) -> String {
    crate::tools::text::thousands(n)
}

fn thousands_u64(n: u64) -> String {
    crate::tools::text::thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(blocks: &[Content]) -> String {
        blocks.iter().filter_map(Content::as_text).collect()
    }

    #[test]
    fn a_result_within_the_bounds_is_unchanged() {
        let blocks = vec![
            Content::text("a".repeat(MAX_RESULT_CHARS)),
            Content::image("image/png", "aGVsbG8="),
        ];
        assert_eq!(bounded(blocks.clone(), "c", None), blocks);
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_the_whole_in_a_file() {
        let dir = OutputDir::new().unwrap();
        let whole: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
        let blocks = vec![Content::text(whole.clone())];
        let out = bounded(blocks, "call-1", Some(&dir));
        let shown = text_of(&out);
        assert!(shown.starts_with("line 0\n"), "{}", &shown[..40]);
        assert!(shown.ends_with("line 19999\n"));
        assert!(shown.chars().count() < MAX_RESULT_CHARS + 400);
        let note = shown
            .lines()
            .find(|l| l.starts_with("[Result truncated: "))
            .unwrap();
        let path = note
            .split("Full result: ")
            .nth(1)
            .unwrap()
            .split(" (read it")
            .next()
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), whole);
        // Cut at line ends: every shown line is a whole line.
        for line in shown
            .lines()
            .filter(|l| !l.starts_with('[') && !l.is_empty())
        {
            assert!(line.starts_with("line "), "{line:?}");
            assert!(line[5..].parse::<u32>().is_ok(), "{line:?}");
        }
    }

    #[test]
    fn the_omitted_count_is_exact_for_text_without_line_ends() {
        let whole = "é".repeat(MAX_RESULT_CHARS * 3);
        let out = bounded(vec![Content::text(whole)], "c", None);
        let shown = text_of(&out);
        let omitted = MAX_RESULT_CHARS * 2;
        assert!(
            shown.contains(&format!(
                "[Result truncated: {} of {} characters omitted from the middle. It was not kept: this session keeps no output folder]",
                thousands(omitted),
                thousands(MAX_RESULT_CHARS * 3)
            )),
            "{}",
            &shown[MAX_RESULT_CHARS / 2 - 10..MAX_RESULT_CHARS / 2 + 200]
        );
        assert_eq!(
            shown.chars().filter(|&c| c == 'é').count(),
            MAX_RESULT_CHARS
        );
    }

    #[test]
    fn json_counts_and_images_beyond_the_count_are_kept_as_files() {
        let dir = OutputDir::new().unwrap();
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest");
        let mut blocks = vec![Content::json(serde_json::json!({"k": "v"}))];
        for _ in 0..MAX_RESULT_IMAGES + 2 {
            blocks.push(Content::image("image/png", png.clone()));
        }
        let out = bounded(blocks, "c2", Some(&dir));
        let images = out
            .iter()
            .filter(|b| matches!(b, Content::Image { .. }))
            .count();
        assert_eq!(images, MAX_RESULT_IMAGES);
        assert_eq!(out[0], Content::json(serde_json::json!({"k": "v"})));
        let notes = text_of(&out);
        assert_eq!(notes.lines().count(), 2, "{notes}");
        let first = notes.lines().next().unwrap();
        assert!(
            first.starts_with(&format!(
                "[Image {} (image/png) left out: a result shows at most {MAX_RESULT_IMAGES} images. Kept at: ",
                MAX_RESULT_IMAGES + 2
            )),
            "{first}"
        );
        let path = first
            .split("Kept at: ")
            .nth(1)
            .unwrap()
            .split(" (read it")
            .next()
            .unwrap();
        assert_eq!(std::fs::read(path).unwrap(), b"\x89PNG\r\n\x1a\nrest");
    }

    #[test]
    fn an_image_over_the_size_cap_is_left_out_and_said_so() {
        let data = "A".repeat((MAX_IMAGE_BYTES as usize) / 3 * 4 + 8);
        let size = thousands_u64(decoded_len(&data));
        let out = bounded(vec![Content::image("image/png", data)], "c3", None);
        let notes = text_of(&out);
        assert_eq!(
            notes,
            format!(
                "[Image 1 (image/png) left out: it is {size} bytes, over the 5,242,880 bytes an image may have. It was not kept: this session keeps no output folder]"
            )
        );
        assert!(!out.iter().any(|b| matches!(b, Content::Image { .. })));
    }

    #[test]
    fn invalid_base64_of_a_left_out_image_is_said() {
        let dir = OutputDir::new().unwrap();
        let data = "!".repeat((MAX_IMAGE_BYTES as usize) / 3 * 4 + 8);
        let out = bounded(vec![Content::image("image/png", data)], "c4", Some(&dir));
        assert!(text_of(&out).contains("It was not kept: its base64 data is invalid"));
    }
}
