import ArgumentParser
import Foundation
import HeraldCore

/// A `templates/` folder on disk, read the same way by `herald templates import` and
/// `herald preview`: its `*.resx` files and `events.json` (other files are ignored).
enum TemplateFolder {
    /// The folder's templates, compiled with `templates.default_culture` as the last step of
    /// culture fallback. Throws `ValidationError` for an unreadable folder or one without
    /// `.resx` files, and ``TemplateError`` for a bad file (callers name the folder).
    static func catalog(_ directory: String, settings: Settings) throws -> TemplateCatalog {
        try TemplateBundle.catalog(files: try read(directory), defaultCulture: RuntimeSettings.defaultCulture(settings))
    }

    static func read(_ directory: String) throws -> [TemplateSource] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw ValidationError("cannot read the templates folder: \(error.localizedDescription)")
        }
        var files: [TemplateSource] = []
        for name in names where name.lowercased().hasSuffix(".resx") || name == EventMetadataFile.fileName {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read \(path)")
            }
            files.append(TemplateSource(fileName: name, contents: Array(data)))
        }
        guard files.contains(where: { $0.fileName.lowercased().hasSuffix(".resx") }) else {
            throw ValidationError("no .resx files in the templates folder")
        }
        return files
    }
}
