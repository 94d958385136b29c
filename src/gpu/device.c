#include "gpu/device.h"
#include "gpu/error.h"
#include "gpu/validation.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The headers this project builds against may predate VK_KHR_cooperative_matrix; only its
 * property query is needed, whose layout is fixed by the extension. */
#ifndef VK_KHR_cooperative_matrix
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
typedef struct VkCooperativeMatrixPropertiesKHR {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    VkComponentTypeNV AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeNV scope;
} VkCooperativeMatrixPropertiesKHR;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(VkPhysicalDevice, uint32_t *,
                                                                                   VkCooperativeMatrixPropertiesKHR *);
#endif

const char *gpu_device_kind_name(enum gpu_device_kind kind)
{
    switch (kind) {
    case GPU_DEVICE_DISCRETE: return "discrete";
    case GPU_DEVICE_INTEGRATED: return "integrated";
    case GPU_DEVICE_VIRTUAL: return "virtual";
    case GPU_DEVICE_CPU: return "cpu";
    default: return "other";
    }
}

static enum gpu_device_kind kind_of(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return GPU_DEVICE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return GPU_DEVICE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return GPU_DEVICE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return GPU_DEVICE_CPU;
    default: return GPU_DEVICE_OTHER;
    }
}

/* --- instance --------------------------------------------------------------------------------*/

static bool has_extension(const VkExtensionProperties *ext, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(ext[i].extensionName, name) == 0)
            return true;
    return false;
}

static int instance_extensions(const char *layer, VkExtensionProperties **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    VkResult r = vkEnumerateInstanceExtensionProperties(layer, n, NULL);
    if (r != VK_SUCCESS)
        return gpu_fail_vk(r, "listing Vulkan instance extensions");
    *out = calloc(*n ? *n : 1, sizeof **out);
    if (!*out)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "listing Vulkan instance extensions: out of memory");
    r = vkEnumerateInstanceExtensionProperties(layer, n, *out);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(*out);
        *out = NULL;
        return gpu_fail_vk(r, "listing Vulkan instance extensions");
    }
    return GPU_OK;
}

static int create_instance(bool validate, VkInstance *instance, VkDebugUtilsMessengerEXT *messenger,
                           uint32_t *api_version)
{
    *instance = VK_NULL_HANDLE;
    *messenger = VK_NULL_HANDLE;
    uint32_t loader_version = VK_API_VERSION_1_0;
    PFN_vkEnumerateInstanceVersion enum_version =
        (PFN_vkEnumerateInstanceVersion)vkGetInstanceProcAddr(NULL, "vkEnumerateInstanceVersion");
    if (enum_version)
        enum_version(&loader_version);
    if (loader_version < VK_API_VERSION_1_1)
        return gpu_fail(GPU_ERR_NO_DEVICE, "creating the Vulkan instance: the Vulkan loader is "
                                           "version 1.0; Vulkan 1.1 is needed");
    *api_version = loader_version < VK_API_VERSION_1_3 ? loader_version : VK_API_VERSION_1_3;

    VkExtensionProperties *ext;
    uint32_t n_ext;
    int st = instance_extensions(NULL, &ext, &n_ext);
    if (st)
        return st;
    const char *enabled[4];
    uint32_t n_enabled = 0;
    VkInstanceCreateFlags flags = 0;
    if (has_extension(ext, n_ext, "VK_KHR_portability_enumeration")) {
        enabled[n_enabled++] = "VK_KHR_portability_enumeration";
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
    bool debug_utils = has_extension(ext, n_ext, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    free(ext);

    const char *layer = "VK_LAYER_KHRONOS_validation";
    if (validate) {
        if (!gpu_validation_layer_present())
            return gpu_fail(GPU_ERR,
                            "validation was requested (PPOCR_VK_VALIDATE=1) but %s is "
                            "not installed",
                            layer);
        st = instance_extensions(layer, &ext, &n_ext);
        if (st)
            return st;
        bool features = has_extension(ext, n_ext, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        debug_utils = debug_utils || has_extension(ext, n_ext, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        free(ext);
        if (!features || !debug_utils)
            return gpu_fail(GPU_ERR, "validation was requested but %s lacks %s", layer,
                            !features ? VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME : VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        enabled[n_enabled++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
        enabled[n_enabled++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    }

    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "ppocr-vk",
        .pEngineName = "ppocr-vk",
        .apiVersion = *api_version,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .flags = flags,
        .pApplicationInfo = &app,
        .enabledLayerCount = validate ? 1 : 0,
        .ppEnabledLayerNames = &layer,
        .enabledExtensionCount = n_enabled,
        .ppEnabledExtensionNames = enabled,
    };
    VkValidationFeaturesEXT features;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info;
    if (validate)
        gpu_validation_instance_chain(&ci, &features, &messenger_info);
    VkResult r = vkCreateInstance(&ci, NULL, instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return gpu_fail(GPU_ERR_NO_DEVICE, "creating the Vulkan instance: no Vulkan driver found "
                                           "(VK_ERROR_INCOMPATIBLE_DRIVER)");
    if (r != VK_SUCCESS) {
        *instance = VK_NULL_HANDLE;
        return gpu_fail_vk(r, "creating the Vulkan instance");
    }
    if (validate) {
        st = gpu_validation_messenger_create(*instance, messenger);
        if (st) {
            vkDestroyInstance(*instance, NULL);
            *instance = VK_NULL_HANDLE;
            return st;
        }
    }
    return GPU_OK;
}

static int physical_devices(VkInstance instance, VkPhysicalDevice **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    VkResult r = vkEnumeratePhysicalDevices(instance, n, NULL);
    if (r == VK_ERROR_INITIALIZATION_FAILED || (r == VK_SUCCESS && *n == 0))
        return gpu_fail(GPU_ERR_NO_DEVICE, "listing Vulkan devices: no Vulkan device found (%s)", gpu_result_name(r));
    if (r != VK_SUCCESS)
        return gpu_fail_vk(r, "listing Vulkan devices");
    *out = calloc(*n, sizeof **out);
    if (!*out)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "listing Vulkan devices: out of memory");
    r = vkEnumeratePhysicalDevices(instance, n, *out);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(*out);
        *out = NULL;
        return gpu_fail_vk(r, "listing Vulkan devices");
    }
    return GPU_OK;
}

/* --- capabilities ----------------------------------------------------------------------------*/

struct device_extensions {
    VkExtensionProperties *list;
    uint32_t count;
};

static bool device_has(const struct device_extensions *e, const char *name)
{
    return has_extension(e->list, e->count, name);
}

static int device_extensions(VkPhysicalDevice pd, struct device_extensions *e)
{
    e->list = NULL;
    e->count = 0;
    VkResult r = vkEnumerateDeviceExtensionProperties(pd, NULL, &e->count, NULL);
    if (r != VK_SUCCESS)
        return gpu_fail_vk(r, "listing Vulkan device extensions");
    e->list = calloc(e->count ? e->count : 1, sizeof *e->list);
    if (!e->list)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "listing Vulkan device extensions: out of memory");
    r = vkEnumerateDeviceExtensionProperties(pd, NULL, &e->count, e->list);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(e->list);
        e->list = NULL;
        return gpu_fail_vk(r, "listing Vulkan device extensions");
    }
    return GPU_OK;
}

static uint64_t largest_device_local_heap(const VkPhysicalDeviceMemoryProperties *m)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < m->memoryHeapCount; i++)
        if ((m->memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && m->memoryHeaps[i].size > best)
            best = m->memoryHeaps[i].size;
    return best;
}

/* Host-visible device memory counts as unified only when it spans the whole of video memory
 * (integrated GPUs, lavapipe, resizable BAR), not the 256 MiB window of older discrete GPUs. */
static bool has_unified_memory(const VkPhysicalDeviceMemoryProperties *m, uint64_t device_local)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < m->memoryTypeCount; i++)
        if ((m->memoryTypes[i].propertyFlags & want) == want &&
            m->memoryHeaps[m->memoryTypes[i].heapIndex].size >= device_local)
            return true;
    return false;
}

static void read_coopmat_shapes(VkInstance instance, VkPhysicalDevice pd, struct gpu_caps *caps)
{
    /* Both extensions report rows of (M, N, K, A, B, C, result, scope); only fp16 inputs at
     * subgroup scope matter to the nets, whatever the accumulator. */
    uint32_t n = 0;
    if (caps->coopmat_khr) {
        PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get =
            (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)vkGetInstanceProcAddr(
                instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
        if (get && get(pd, &n, NULL) == VK_SUCCESS && n > 0) {
            VkCooperativeMatrixPropertiesKHR *p = calloc(n, sizeof *p);
            for (uint32_t i = 0; p && i < n; i++)
                p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
            if (p && get(pd, &n, p) == VK_SUCCESS)
                for (uint32_t i = 0; i < n && caps->coopmat_shape_count < 16; i++)
                    if (p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                        p[i].scope == VK_SCOPE_SUBGROUP_NV)
                        caps->coopmat_shapes[caps->coopmat_shape_count++] = (struct gpu_coopmat_shape){
                            p[i].MSize, p[i].NSize, p[i].KSize, p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV};
            free(p);
            return;
        }
    }
    if (caps->coopmat_nv) {
        PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
            (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
                instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
        if (get && get(pd, &n, NULL) == VK_SUCCESS && n > 0) {
            VkCooperativeMatrixPropertiesNV *p = calloc(n, sizeof *p);
            for (uint32_t i = 0; p && i < n; i++)
                p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
            if (p && get(pd, &n, p) == VK_SUCCESS)
                for (uint32_t i = 0; i < n && caps->coopmat_shape_count < 16; i++)
                    if (p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                        p[i].scope == VK_SCOPE_SUBGROUP_NV)
                        caps->coopmat_shapes[caps->coopmat_shape_count++] = (struct gpu_coopmat_shape){
                            p[i].MSize, p[i].NSize, p[i].KSize, p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV};
            free(p);
        }
    }
}

/* Features of a device and the structures that enable them, chained for vkCreateDevice. */
struct device_features {
    VkPhysicalDeviceFeatures2 base;
    VkPhysicalDevice16BitStorageFeatures storage16;
    VkPhysicalDevice8BitStorageFeatures storage8;
    VkPhysicalDeviceShaderFloat16Int8Features float16_int8;
    VkPhysicalDeviceSubgroupSizeControlFeatures subgroup_size_control;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat_nv;
    VkPhysicalDeviceVulkanMemoryModelFeatures memory_model; /* the cooperative-matrix kernel's scopes */
    const char *extensions[8];
    uint32_t extension_count;
    int push_descriptor_extension; /* index in extensions, or -1 */
};

/* Reads features and limits; `api` is the version usable with this device (instance and device
 * both). Promoted extensions are used through their core structure when the version allows,
 * through the extension when present, and not at all otherwise. */
static void read_caps(VkInstance instance, VkPhysicalDevice pd, uint32_t api, const struct device_extensions *ext,
                      struct gpu_caps *caps, struct device_features *f)
{
    memset(caps, 0, sizeof *caps);
    memset(f, 0, sizeof *f);
    f->push_descriptor_extension = -1;

    bool has_float16_int8 = api >= VK_API_VERSION_1_2 || device_has(ext, "VK_KHR_shader_float16_int8");
    bool has_storage8 = api >= VK_API_VERSION_1_2 || device_has(ext, "VK_KHR_8bit_storage");
    bool has_driver_props = api >= VK_API_VERSION_1_2 || device_has(ext, "VK_KHR_driver_properties");
    bool has_size_control = api >= VK_API_VERSION_1_3 || device_has(ext, "VK_EXT_subgroup_size_control");
    bool has_push = device_has(ext, "VK_KHR_push_descriptor");
    bool has_memory_model = api >= VK_API_VERSION_1_2 || device_has(ext, "VK_KHR_vulkan_memory_model");
    caps->coopmat_khr = device_has(ext, "VK_KHR_cooperative_matrix");
    caps->coopmat_nv = device_has(ext, "VK_NV_cooperative_matrix");

    /* properties */
    VkPhysicalDeviceSubgroupProperties subgroup = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, .pNext = &subgroup};
    VkPhysicalDeviceDriverProperties driver = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupSizeControlProperties size_control = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    if (has_driver_props) {
        driver.pNext = props.pNext;
        props.pNext = &driver;
    }
    if (has_size_control) {
        size_control.pNext = props.pNext;
        props.pNext = &size_control;
    }
    vkGetPhysicalDeviceProperties2(pd, &props);
    const VkPhysicalDeviceLimits *lim = &props.properties.limits;

    snprintf(caps->device_name, sizeof caps->device_name, "%s", props.properties.deviceName);
    if (has_driver_props) {
        snprintf(caps->driver_name, sizeof caps->driver_name, "%s", driver.driverName);
        snprintf(caps->driver_info, sizeof caps->driver_info, "%s", driver.driverInfo);
    }
    caps->kind = kind_of(props.properties.deviceType);
    caps->is_cpu = caps->kind == GPU_DEVICE_CPU;
    caps->api_version = api;
    caps->driver_version = props.properties.driverVersion;
    caps->vendor_id = props.properties.vendorID;
    caps->device_id = props.properties.deviceID;
    memcpy(caps->device_uuid, id.deviceUUID, VK_UUID_SIZE);
    memcpy(caps->pipeline_cache_uuid, props.properties.pipelineCacheUUID, VK_UUID_SIZE);
    caps->subgroup_size = subgroup.subgroupSize;
    if (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
        caps->subgroup_ops = subgroup.supportedOperations;
    caps->min_subgroup_size = caps->max_subgroup_size = subgroup.subgroupSize;
    caps->max_shared_memory = lim->maxComputeSharedMemorySize;
    for (int i = 0; i < 3; i++) {
        caps->max_workgroup_size[i] = lim->maxComputeWorkGroupSize[i];
        caps->max_workgroup_count[i] = lim->maxComputeWorkGroupCount[i];
    }
    caps->max_workgroup_invocations = lim->maxComputeWorkGroupInvocations;
    caps->max_push_constants = lim->maxPushConstantsSize;
    caps->max_storage_buffer_range = lim->maxStorageBufferRange;
    caps->min_storage_buffer_offset_alignment = lim->minStorageBufferOffsetAlignment;
    caps->max_texel_buffer_elements = lim->maxTexelBufferElements;
    caps->min_texel_buffer_offset_alignment = lim->minTexelBufferOffsetAlignment;
    caps->non_coherent_atom_size = lim->nonCoherentAtomSize;
    caps->timestamp_period = lim->timestampPeriod;

    vkGetPhysicalDeviceMemoryProperties(pd, &caps->memory);
    caps->device_local_bytes = largest_device_local_heap(&caps->memory);
    caps->unified_memory = has_unified_memory(&caps->memory, caps->device_local_bytes);

    /* features */
    f->base.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f->storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    f->base.pNext = &f->storage16;
    if (has_storage8) {
        f->storage8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
        f->storage8.pNext = f->base.pNext;
        f->base.pNext = &f->storage8;
    }
    if (has_float16_int8) {
        f->float16_int8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
        f->float16_int8.pNext = f->base.pNext;
        f->base.pNext = &f->float16_int8;
    }
    if (has_size_control) {
        f->subgroup_size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
        f->subgroup_size_control.pNext = f->base.pNext;
        f->base.pNext = &f->subgroup_size_control;
    }
    if (caps->coopmat_nv && has_memory_model) {
        f->coopmat_nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
        f->coopmat_nv.pNext = f->base.pNext;
        f->memory_model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
        f->memory_model.pNext = &f->coopmat_nv;
        f->base.pNext = &f->memory_model;
    }
    vkGetPhysicalDeviceFeatures2(pd, &f->base);

    /* keep only what is enabled below, so the structures double as the create-info chain */
    VkPhysicalDeviceFeatures all = f->base.features;
    memset(&f->base.features, 0, sizeof f->base.features);
    f->base.features.shaderInt16 = all.shaderInt16;
    f->base.features.shaderInt64 = all.shaderInt64;
    caps->shader_int64 = all.shaderInt64;

    /* every supported 16/8-bit storage feature is harmless to enable */
    caps->storage_16bit = f->storage16.storageBuffer16BitAccess;
    if (has_storage8) {
        caps->storage_8bit = f->storage8.storageBuffer8BitAccess;
        if (api < VK_API_VERSION_1_2) /* present, since has_storage8 */
            f->extensions[f->extension_count++] = "VK_KHR_8bit_storage";
    }
    if (has_float16_int8) {
        caps->shader_fp16 = f->float16_int8.shaderFloat16;
        caps->shader_int8 = f->float16_int8.shaderInt8;
        if (api < VK_API_VERSION_1_2)
            f->extensions[f->extension_count++] = "VK_KHR_shader_float16_int8";
    }
    if (has_size_control) {
        caps->subgroup_size_control = f->subgroup_size_control.subgroupSizeControl &&
                                      (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
        if (caps->subgroup_size_control) {
            caps->min_subgroup_size = size_control.minSubgroupSize;
            caps->max_subgroup_size = size_control.maxSubgroupSize;
            if (api < VK_API_VERSION_1_3)
                f->extensions[f->extension_count++] = "VK_EXT_subgroup_size_control";
        } else {
            f->subgroup_size_control.subgroupSizeControl = VK_FALSE;
            f->subgroup_size_control.computeFullSubgroups = VK_FALSE;
        }
    }
    if (f->memory_model.sType) {
        /* The cooperative-matrix kernel declares both capabilities: enabled together or not at
         * all. With the memory model on, the device-scope atomics of other kernels need its
         * device scope too. */
        caps->coopmat_nv = f->coopmat_nv.cooperativeMatrix && f->memory_model.vulkanMemoryModel &&
                           f->memory_model.vulkanMemoryModelDeviceScope;
        f->coopmat_nv.cooperativeMatrixRobustBufferAccess = VK_FALSE;
        f->memory_model.vulkanMemoryModelAvailabilityVisibilityChains = VK_FALSE;
        if (caps->coopmat_nv) {
            f->extensions[f->extension_count++] = "VK_NV_cooperative_matrix";
            if (api < VK_API_VERSION_1_2)
                f->extensions[f->extension_count++] = "VK_KHR_vulkan_memory_model";
        } else {
            f->coopmat_nv.cooperativeMatrix = VK_FALSE;
            f->memory_model.vulkanMemoryModel = VK_FALSE;
            f->memory_model.vulkanMemoryModelDeviceScope = VK_FALSE;
        }
    } else {
        caps->coopmat_nv = false;
    }
    if (has_push) {
        caps->push_descriptors = true;
        f->push_descriptor_extension = (int)f->extension_count;
        f->extensions[f->extension_count++] = "VK_KHR_push_descriptor";
    }
    read_coopmat_shapes(instance, pd, caps);
}

/* --- device choice ---------------------------------------------------------------------------*/

static int kind_rank(enum gpu_device_kind k)
{
    switch (k) {
    case GPU_DEVICE_DISCRETE: return 4;
    case GPU_DEVICE_INTEGRATED: return 3;
    case GPU_DEVICE_VIRTUAL: return 2;
    case GPU_DEVICE_CPU: return 1;
    default: return 0;
    }
}

static uint32_t usable_api(uint32_t instance_api, VkPhysicalDevice pd)
{
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pd, &p);
    uint32_t dev = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion), 0);
    return dev < instance_api ? dev : instance_api;
}

static int pick_device(VkInstance instance, uint32_t instance_api, int wanted, bool gpus_only, VkPhysicalDevice *out)
{
    VkPhysicalDevice *pds;
    uint32_t n;
    int st = physical_devices(instance, &pds, &n);
    if (st)
        return st;
    if (wanted >= 0) {
        if ((uint32_t)wanted >= n) {
            free(pds);
            if (n == 1)
                return gpu_fail(GPU_ERR_NO_DEVICE,
                                "choosing Vulkan device %d: there is only 1 device, number 0 (see --list-devices)",
                                wanted);
            return gpu_fail(GPU_ERR_NO_DEVICE,
                            "choosing Vulkan device %d: there are only %u devices, numbered 0 to %u "
                            "(see --list-devices)",
                            wanted, n, n - 1);
        }
        *out = pds[wanted];
        free(pds);
        if (usable_api(instance_api, *out) < VK_API_VERSION_1_1)
            return gpu_fail(GPU_ERR_NO_DEVICE,
                            "choosing Vulkan device %d: it supports only "
                            "Vulkan 1.0; 1.1 is needed",
                            wanted);
        return GPU_OK;
    }
    int best = -1, best_rank = -1;
    uint64_t best_memory = 0;
    bool cpu_passed_over = false;
    for (uint32_t i = 0; i < n; i++) {
        if (usable_api(instance_api, pds[i]) < VK_API_VERSION_1_1)
            continue;
        VkPhysicalDeviceProperties p;
        VkPhysicalDeviceMemoryProperties m;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        vkGetPhysicalDeviceMemoryProperties(pds[i], &m);
        if (gpus_only && kind_of(p.deviceType) == GPU_DEVICE_CPU) {
            cpu_passed_over = true;
            continue;
        }
        int rank = kind_rank(kind_of(p.deviceType));
        uint64_t memory = largest_device_local_heap(&m);
        if (rank > best_rank || (rank == best_rank && memory > best_memory)) {
            best = (int)i;
            best_rank = rank;
            best_memory = memory;
        }
    }
    if (best >= 0)
        *out = pds[best];
    free(pds);
    if (best < 0 && cpu_passed_over)
        return gpu_fail(GPU_ERR_NO_DEVICE, "choosing a Vulkan GPU: the only Vulkan devices are CPU drivers");
    if (best < 0)
        return gpu_fail(GPU_ERR_NO_DEVICE, "choosing a Vulkan device: none supports Vulkan 1.1");
    return GPU_OK;
}

static int pick_queue(VkPhysicalDevice pd, uint32_t *family, uint32_t *timestamp_bits, uint32_t *count)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
    if (!q)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "listing queue families: out of memory");
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0)
            continue;
        /* a family that can time dispatches wins; the first such is usually the main one */
        if (best < 0 || (q[best].timestampValidBits == 0 && q[i].timestampValidBits > 0))
            best = (int)i;
    }
    if (best >= 0) {
        *family = (uint32_t)best;
        *timestamp_bits = q[best].timestampValidBits;
        *count = q[best].queueCount;
    }
    free(q);
    if (best < 0)
        return gpu_fail(GPU_ERR_NO_DEVICE, "choosing a queue: the device has no compute queue");
    return GPU_OK;
}

/* --- logical device --------------------------------------------------------------------------*/

static int create_logical_device(const struct gpu_settings *s, gpu_device_chosen_fn chosen, void *ctx,
                                 struct gpu_device *d)
{
    uint32_t api = usable_api(d->caps.api_version, d->physical);
    struct device_extensions ext;
    int st = device_extensions(d->physical, &ext);
    if (st)
        return st;
    struct device_features f;
    read_caps(d->instance, d->physical, api, &ext, &d->caps, &f);
    free(ext.list);
    if (s->no_push_descriptors && f.push_descriptor_extension >= 0) {
        d->caps.push_descriptors = false;
        for (uint32_t i = (uint32_t)f.push_descriptor_extension; i + 1 < f.extension_count; i++)
            f.extensions[i] = f.extensions[i + 1];
        f.extension_count--;
    }

    uint32_t timestamp_bits = 0, family_queues = 1;
    st = pick_queue(d->physical, &d->queue_family, &timestamp_bits, &family_queues);
    if (st)
        return st;
    d->caps.timestamp_valid_bits = timestamp_bits;
    d->caps.queue_count = s->queues < family_queues ? s->queues : family_queues;
    d->caps.timestamps = timestamp_bits > 0 && d->caps.timestamp_period > 0;
    if (chosen)
        chosen(ctx, &d->caps);

    float priorities[GPU_MAX_QUEUES];
    for (uint32_t i = 0; i < GPU_MAX_QUEUES; i++)
        priorities[i] = 1.0f;
    VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                     .queueFamilyIndex = d->queue_family,
                                     .queueCount = d->caps.queue_count,
                                     .pQueuePriorities = priorities};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &f.base,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &queue,
                             .enabledExtensionCount = f.extension_count,
                             .ppEnabledExtensionNames = f.extensions};
    VkResult r = vkCreateDevice(d->physical, &ci, NULL, &d->device);
    if (r != VK_SUCCESS) {
        d->device = VK_NULL_HANDLE;
        char doing[320];
        snprintf(doing, sizeof doing, "creating the Vulkan device on %s", d->caps.device_name);
        return gpu_fail_vk(r, doing);
    }
    if (d->caps.push_descriptors) {
        d->push_descriptor_set =
            (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(d->device, "vkCmdPushDescriptorSetKHR");
        d->caps.push_descriptors = d->push_descriptor_set != NULL;
    }
    if (s->force_fp32) {
        d->caps.shader_fp16 = false;
        d->caps.storage_16bit = false;
    }
    if (s->max_buffer_range && s->max_buffer_range < d->caps.max_storage_buffer_range)
        d->caps.max_storage_buffer_range = s->max_buffer_range;
    return GPU_OK;
}

/* Whether the user chose the drivers the Vulkan loader loads, with one of its variables (the
 * filters from loader 1.3.234 on, or the manifests' paths). */
static bool user_chose_drivers(void)
{
    static const char *const variables[] = {"VK_LOADER_DRIVERS_DISABLE", "VK_LOADER_DRIVERS_SELECT", "VK_DRIVER_FILES",
                                            "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"};
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++)
        if (getenv(variables[i]))
            return true;
    return false;
}

/* Whether the kernel shows a GPU a Vulkan driver could open: a DRM render node (Mesa's drivers,
 * virtio-gpu), NVIDIA's device files, or WSL's /dev/dxg. */
static bool gpu_device_node_present(void)
{
    if (access("/dev/dxg", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0)
        return true;
    DIR *dri = opendir("/dev/dri");
    if (!dri)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(dri));)
        found = strncmp(e->d_name, "renderD", 7) == 0;
    closedir(dri);
    return found;
}

/* A search of GPUs alone (the automatic choice, which takes the CPU backend next) costs nothing
 * where the kernel shows no GPU: the drivers are not loaded at all (20 ms of a process's start on
 * a machine without a GPU, Mesa's radeon driver bringing LLVM), unless the user chose the drivers
 * with a loader variable. Where it shows one, every driver loads and the search passes over the
 * CPU ones: leaving lavapipe out through the loader's filter would save a few ms, but setting the
 * variable while the process runs races any other thread's reading of the environment. */
static int create_instance_for(const struct gpu_settings *s, VkInstance *instance,
                               VkDebugUtilsMessengerEXT *messenger, uint32_t *api_version)
{
    if (s->gpus_only && !user_chose_drivers() && !gpu_device_node_present()) {
        *instance = VK_NULL_HANDLE;
        *messenger = VK_NULL_HANDLE;
        return gpu_fail(GPU_ERR_NO_DEVICE,
                        "choosing a Vulkan GPU: the kernel shows none (no /dev/dri/renderD*, /dev/nvidiactl or /dev/dxg)");
    }
    return create_instance(s->validate, instance, messenger, api_version);
}

int gpu_device_create(const struct gpu_settings *s, gpu_device_chosen_fn chosen, void *ctx, struct gpu_device *d)
{
    memset(d, 0, sizeof *d);
    atomic_init(&d->lost, false);
    uint32_t api;
    int st = create_instance_for(s, &d->instance, &d->messenger, &api);
    if (!st)
        st = pick_device(d->instance, api, s->device_index, s->gpus_only, &d->physical);
    if (!st) {
        d->caps.api_version = api;
        st = create_logical_device(s, chosen, ctx, d);
    }
    return st;
}

void gpu_device_destroy(struct gpu_device *d)
{
    if (d->device)
        vkDestroyDevice(d->device, NULL);
    if (d->instance) {
        gpu_validation_messenger_destroy(d->instance, d->messenger);
        vkDestroyInstance(d->instance, NULL);
    }
    d->device = VK_NULL_HANDLE;
    d->instance = VK_NULL_HANDLE;
}

int gpu_device_fail_vk(struct gpu_device *d, VkResult r, const char *doing)
{
    if (r == VK_ERROR_DEVICE_LOST)
        atomic_store(&d->lost, true);
    return gpu_fail_vk(r, doing);
}

/* --- device list -----------------------------------------------------------------------------*/

static void format_driver_version(uint32_t vendor, uint32_t v, char *buf, size_t size)
{
    if (vendor == 0x10de) /* NVIDIA packs 10.8.8.6 bits */
        snprintf(buf, size, "%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff);
    else
        snprintf(buf, size, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

/* An instance of its own for listing, with its physical devices (free *pds, then close_listing). */
static int open_listing(VkInstance *instance, VkDebugUtilsMessengerEXT *messenger, uint32_t *api,
                        VkPhysicalDevice **pds, uint32_t *n)
{
    struct gpu_settings o;
    gpu_settings_from_env(NULL, &o);
    *pds = NULL;
    int st = create_instance(o.validate, instance, messenger, api);
    if (st)
        return st;
    st = physical_devices(*instance, pds, n);
    if (st) {
        gpu_validation_messenger_destroy(*instance, *messenger);
        vkDestroyInstance(*instance, NULL);
    }
    return st;
}

int gpu_list_devices(FILE *out)
{
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    uint32_t api, n;
    VkPhysicalDevice *pds;
    int st = open_listing(&instance, &messenger, &api, &pds, &n);
    if (st)
        return st;
    for (uint32_t i = 0; !st && i < n; i++) {
        struct device_extensions ext;
        st = device_extensions(pds[i], &ext);
        if (st)
            break;
        struct gpu_caps caps;
        struct device_features f;
        read_caps(instance, pds[i], usable_api(api, pds[i]), &ext, &caps, &f);
        free(ext.list);
        char version[32];
        format_driver_version(caps.vendor_id, caps.driver_version, version, sizeof version);
        fprintf(out, "%u: %s (%s) driver %s %s, %llu MiB device-local, Vulkan %u.%u\n", i, caps.device_name,
                gpu_device_kind_name(caps.kind), caps.driver_name[0] ? caps.driver_name : "unknown",
                caps.driver_info[0] ? caps.driver_info : version, (unsigned long long)(caps.device_local_bytes >> 20),
                VK_API_VERSION_MAJOR(caps.api_version), VK_API_VERSION_MINOR(caps.api_version));
    }
    free(pds);
    gpu_validation_messenger_destroy(instance, messenger);
    vkDestroyInstance(instance, NULL);
    return st ? st : (int)n;
}

int gpu_device_kinds(enum gpu_device_kind *out, int max)
{
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    uint32_t api, n;
    VkPhysicalDevice *pds;
    int st = open_listing(&instance, &messenger, &api, &pds, &n);
    if (st)
        return st;
    for (uint32_t i = 0; !st && i < n && (int)i < max; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        out[i] = kind_of(p.deviceType);
    }
    free(pds);
    gpu_validation_messenger_destroy(instance, messenger);
    vkDestroyInstance(instance, NULL);
    return st ? st : (int)n;
}
