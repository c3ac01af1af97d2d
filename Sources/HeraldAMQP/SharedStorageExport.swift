// The module's value types keep their fields in ``HeraldSupport/SharedStorage``, whose
// dynamic-member subscripts are what `value.field` calls. Re-exported so that a file importing
// this module reaches the fields without importing HeraldSupport too (member imports are checked
// per file: MemberImportVisibility).
@_exported import protocol HeraldSupport.SharedStorage
